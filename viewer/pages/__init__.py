"""Streamlit pages, their session state and navigation."""
