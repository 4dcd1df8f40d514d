"""Bundled sample traces, one folder per format; the app opens them when started without paths."""
