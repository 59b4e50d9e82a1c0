"""Rule-based analysis of parsed documents that needs no model: verdict–facts consistency, provisos."""
