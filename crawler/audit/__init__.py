"""The staging audit (SPEC S7): every URL explained, from what the crawl recorded (pure)."""
