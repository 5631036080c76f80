"""Hindsight, the optional external provider: its HTTP client, banks, recall and retain."""
