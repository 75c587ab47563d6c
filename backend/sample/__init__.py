"""Builders of the bundled ``sample_data/`` (build time only: ``python -m backend build-sample``).

``build`` writes every dataset from the raw files in ``sample_data/raw/``; ``pools`` reads those raw files into
candidate questions with answer pools; ``multisource`` assigns documents to sources (RA-RAG's benchmark);
``scenarios`` builds the BRIDGE/TRD-style FA / FI / FE / RA items. Nothing here runs in the app.
"""
