"""The workflows hera-volcano ships: the MPI and PyTorch hello worlds, the steps and DAG hello jobs and the
data pipeline, built as a user would."""
