#!/bin/sh
# A stand-in for an agent CLI, for what the real ones cannot show on demand.
# The first argument picks the behaviour; the CLIDriver tests run it as
# "sh testdata/fakeagent.sh MODE ...".
mode=$1
shift
case $mode in
hang)
	# Ignore SIGTERM (children inherit that), start a child, and never end:
	# only SIGKILL to the whole process group stops it.
	trap '' TERM
	sleep 300 &
	echo "$$ $!" > "$1"
	while :; do sleep 1; done
	;;
hang-in-tool)
	# Say, in the output format $1 (claude or codex), that a command
	# started, then hang as above: the agent's command, not its model, ran
	# out the time.
	format=$1
	shift
	if [ "$format" = claude ]; then
		echo '{"type":"system","subtype":"init","session_id":"s-hang"}'
		echo '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go test ./..."}}]}}'
	else
		echo '{"type":"thread.started","thread_id":"th-hang"}'
		echo '{"type":"item.started","item":{"type":"command_execution","command":"go test ./...","status":"in_progress"}}'
	fi
	trap '' TERM
	sleep 300 &
	echo "$$ $!" > "$1"
	while :; do sleep 1; done
	;;
hang-after-tool)
	# A command that finished (Codex's JSON lines), then no answer from the
	# model: the provider ran out the time.
	echo '{"type":"thread.started","thread_id":"th-hang"}'
	echo '{"type":"item.started","item":{"type":"command_execution","command":"ls","status":"in_progress"}}'
	echo '{"type":"item.completed","item":{"type":"command_execution","command":"ls","aggregated_output":"a","exit_code":0,"status":"completed"}}'
	trap '' TERM
	sleep 300 &
	echo "$$ $!" > "$1"
	while :; do sleep 1; done
	;;
leftover)
	# Leave a child running and exit at once.
	sleep 300 &
	echo "$$ $!" > "$1"
	echo "done"
	;;
garbage)
	# Not the JSON the template promises; exit with the status given.
	echo "this is not json {"
	echo "neither is this" >&2
	exit "$1"
	;;
argv)
	# Print the arguments, one per line, then the prompt from stdin or the
	# file given as the first argument after "file".
	for a in "$@"; do echo "arg:$a"; done
	if [ "$1" = file ]; then cat "$2"; else cat; fi
	echo "env:GAFFER_TEST_DIR=$GAFFER_TEST_DIR"
	echo "env:SECRET_API_KEY=$SECRET_API_KEY"
	;;
claude-error)
	# A Claude Code result object that reports an error of the request (the
	# agent's, not the provider's), and its exit status.
	echo '{"type":"result","subtype":"success","is_error":true,"result":"API Error: 400 invalid_request_error","session_id":"s-err","num_turns":1,"total_cost_usd":0}'
	exit 1
	;;
claude-overloaded)
	# The same with the provider overloaded: an outage, not the agent's fault.
	echo '{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","session_id":"s-err","num_turns":1,"total_cost_usd":0}'
	exit 1
	;;
stream)
	# Codex-style JSON lines: one message, then wait until the file named by
	# $1 exists (the test creates it when the message reaches OnMessage),
	# then finish the turn. Without streaming this never ends.
	echo '{"type":"thread.started","thread_id":"th-s"}'
	echo '{"type":"item.completed","item":{"type":"agent_message","text":"working on it"}}'
	while [ ! -e "$1" ]; do sleep 0.05; done
	echo '{"type":"item.completed","item":{"type":"agent_message","text":"finished"}}'
	echo '{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":0,"output_tokens":2}}'
	;;
leak)
	# An agent that prints its API key on stderr and fails.
	echo "key is $SECRET_API_KEY" >&2
	exit 2
	;;
*)
	echo "fakeagent: unknown mode $mode" >&2
	exit 64
	;;
esac
