"""Everything that decides whether a text may reach a system prompt."""
