"""Item pipelines: each decides one thing about a URL (SPEC S3)."""
