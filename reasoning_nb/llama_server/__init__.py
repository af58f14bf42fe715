"""The demo server: a real ``llama-server`` process, the binary it runs, and its build."""
