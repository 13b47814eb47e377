"""``check``: a published sitemap set read over HTTP as a search engine reads it (pure rules)."""
