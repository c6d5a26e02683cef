"""backend_bench's OpInfo export (python -m benchmatrix_opinfo_export OUT_DIR); see __main__.py."""
