"""Scrapy download handlers of the project."""
