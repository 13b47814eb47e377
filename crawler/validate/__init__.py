"""Validation of any sitemap set: reading (HTTP, gzip, limits), protocol rules, extension rules (pure)."""
