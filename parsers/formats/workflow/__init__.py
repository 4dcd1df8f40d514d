"""The Standard Workflow Format and the tool exports (Claude Code, Cursor, Bolt.new, Lovable) that convert to it."""
