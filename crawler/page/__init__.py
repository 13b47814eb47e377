"""Facts read from one response: HTML, headers, content digest, structured
data, images, videos, hreflang, languages and news (pure, no Scrapy)."""
