"""The Python evaluation child of run_and_check (KernelBench sources); see __main__.py."""
