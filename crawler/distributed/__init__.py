"""A crawl shared by many workers through Redis (SPEC S8): frontier, seen set, leases."""
