"""What one crawl shares among its Scrapy components: the crawl context and the run state
(the seam to the state store), the site's robots rules and robots user agent, the response
reader, and a shared crawl's worker name.

A Scrapy component (spider, middleware, extension, pipeline, scheduler, download handler)
imports the core, ``settings`` and this package; never another component, except to look
one up with ``crawler.get_extension`` (tests/test_architecture.py holds the rule).
"""
