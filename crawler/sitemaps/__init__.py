"""Sitemap writing (SPEC S4): entries, shards and their names, whole-site rules, spool, atomic publishing (pure)."""
