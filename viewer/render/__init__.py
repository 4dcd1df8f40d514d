"""The one place trace text becomes HTML (html: escaped and sanitised), and number / time formatting."""
