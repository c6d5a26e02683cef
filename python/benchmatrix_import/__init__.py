"""Import helper of experiment_runner's huggingface, timm_models and exported suites."""
