"""The cook: ids, dedup, the request tree, totals, pricing and redaction over parsed traces."""
