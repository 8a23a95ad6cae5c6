"""The workflows hera-volcano ships: the MPI hello world and the steps and DAG hello jobs, built as a user would."""
