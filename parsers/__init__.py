"""traceview's readers: bytes of every supported trace format to one cooked document.

io (sources, records) -> registry (which format) -> formats (raw records to the typed model)
-> cook (ids, dedup, request tree, totals, pricing, redaction); `pipeline` runs them with a
guard around every input and record. Nothing here imports Streamlit.
"""
