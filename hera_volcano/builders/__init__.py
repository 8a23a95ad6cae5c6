"""Job kinds built for users: the MPI job, the batch job, and pipelines of jobs rendered as an Argo DAG or Steps."""
