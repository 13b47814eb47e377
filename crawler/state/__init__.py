"""The state store across runs: schema and migrations, lock, store, shard placement (pure, no Scrapy)."""
