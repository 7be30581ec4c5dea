// Package secretenv tells the environment variables that hold secrets by
// their names (…_API_KEY, …_ACCESS_KEY, …_SECRET, …_SECRET_KEY, …_TOKEN,
// …_PASSWORD, any case) and takes them out of an environment: what
// gaffer starts (agents' commands, CLI agents, gaffer's own git) gets
// none of them unless it is told otherwise. It is the one list: package
// agent (IsSecretName) and internal/gitcmd use it.
package secretenv
