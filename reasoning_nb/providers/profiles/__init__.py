"""The providers' profiles, one module per wire family (the providers that share a protocol
share its spellings, so they sit together). A new provider is one ``Profile`` here and one line
in ``providers/catalog.py``; a new wire family is one module here and one protocol module."""
