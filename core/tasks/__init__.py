"""The tasks extension (SEP-1686 / io.modelcontextprotocol/tasks): records and their states, the store
port, the calls that create tasks, the tasks/* methods and the runner."""
