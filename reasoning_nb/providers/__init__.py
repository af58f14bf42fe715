"""Providers: one module per wire protocol, plus the catalog and the shared transport."""
