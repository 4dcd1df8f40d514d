"""The app's pages, one module each (registered in viewer.nav.PAGES)."""
