"""The runs a server holds: collections of cooked inputs."""
