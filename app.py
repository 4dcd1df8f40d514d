"""`streamlit run app.py [-- PATH ...]` from a checkout; the app itself is viewer/main.py."""
from viewer.main import main

main(__file__)
