"""Pure views of cooked data (conversation, requests, metrics, compare, ratings); no Streamlit."""
