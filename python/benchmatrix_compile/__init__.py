"""benchmatrix's compile helper: TorchScript from experiment_runner -> ExportedProgram -> AOTInductor."""
