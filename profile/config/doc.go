// Package config loads gaffer's profiles: named sets of settings saying
// which driver and model each agent role uses, where the model is served,
// what a session and the workflow may spend, what models cost, how
// external agent commands are run, and whether the TDD check is on.
//
// # Where the file is
//
// Load reads gaffer.yaml in the repository, or else
// $XDG_CONFIG_HOME/gaffer/config.yaml (~/.config when XDG_CONFIG_HOME is
// unset). The first file found is the whole configuration. With no file,
// only the built-in "default" profile exists: every role on the script
// driver, so nothing is needed offline.
//
// # The format
//
//	default_profile: fast          # used when no profile is named; else "default"
//	max_runs_per_repo: 2           # gaffer serve: runs of this repository at once at most (default: --workers)
//	profiles:
//	  default:                     # laid over the built-in default, under every profile
//	    limits:
//	      max_task_review_iterations: 4
//	  fast:
//	    driver: cli                # script, llm or cli: every role unless roles says otherwise
//	    agent: claude              # the CLI template for driver cli (built-in: claude, codex, gemini)
//	    model: claude-sonnet-4-5
//	    timeouts:                  # every role's; roles.<role>.timeouts overrides key by key
//	      call: 5m                 # llm: one model call (default 5m)
//	      call_attempts: 4         # llm: tries of a call on 429, 5xx, no answer (default 4)
//	      session: 1h              # one session's wall time, llm or cli (default 1h)
//	    roles:                     # architect, developer, reviewer, evaluator; summarizer (optional, off unless it names a driver)
//	      architect: {driver: llm, model: claude-opus-4-1}
//	      doctor: {model: claude-haiku-4-5, strong_model: claude-opus-4-1}   # replanner: the architect's
//	      developer: {escalation_model: claude-opus-4-1, timeouts: {session: 2h}}   # a stuck phase's bigger model
//	    provider:                  # for driver llm
//	      name: anthropic          # anthropic, openai or ollama
//	      base_url: https://api.anthropic.com
//	      api_key_env: ANTHROPIC_API_KEY   # the variable's name; never the key
//	    limits:                    # 0 or absent takes the default
//	      max_turns: 40
//	      max_tokens_per_session: 200000   # default 0: the driver's budget (2,000,000 tokens)
//	      max_task_review_iterations: 5    # default 5
//	      max_phase_attempts: 2            # default 2
//	      max_plan_revisions: 3            # default 3
//	      max_run_cost_usd: 5              # the run's budget for recovery (0: none)
//	      max_run_tokens: 2000000
//	    recovery:                  # the Doctor, replans, the stuck handler
//	      enabled: true            # default true
//	      max_replans_per_run: 0   # thresholds and budgets (recovery.Config's keys): absent takes
//	      budget_warn_at: 0.9      # the default, 0 is none (no replans); fractions in [0, 1]
//	    prices:                    # USD per million tokens
//	      claude-sonnet-4-5: {input: 3, output: 15, cached: 0.3}
//	    agents:                    # CLI templates: add new ones, or override built-ins field by field
//	      claude:
//	        env: {CLAUDE_CODE_MAX_OUTPUT_TOKENS: "32000"}
//	        pass_env: [ANTHROPIC_API_KEY]  # the secret variables it may see (replaces the built-in list)
//	      aider:
//	        command: [aider, --yes-always, --message-file, "{prompt_file}", "--model={model}"]
//	        prompt: file           # stdin, arg ({prompt}) or file ({prompt_file})
//	        output: text           # claude-json, codex-jsonl or text
//	    tdd: false
//	    mode: auto                 # auto (default): a plan with type or depends-on lines is phased, else task;
//	                               # task: phased execution off, one task per phase in the plan's order; phased
//	    strict_files: true         # default false: a session's change outside its tasks' files: lines, or a
//	                               # declared file left untouched, fails the attempt
//	    parallel: 2                # lanes of a phase at once (default 4; 1: one after another)
//	    notify:                    # whom a run tells (see the README's Notifications); replaces the default's as a whole
//	      url: http://127.0.0.1:8080       # the inbox: notices link to <url>/runs/<id>
//	      events: [awaiting_approval, completed]   # default: all six
//	      targets:                 # each one of webhook, ntfy, command
//	        - webhook: {url: https://example.com/hook, secret_env: HOOK_SECRET}
//	        - webhook: {url_env: SLACK_HOOK_URL, format: slack}  # the variable holding the URL
//	        - ntfy: {url_env: NTFY_TOPIC_URL, priority: high}
//	        - command: {run: [notify-send, gaffer]}
//
// Parsing is strict: an unknown key, a key given twice or a value of the
// wrong type is an error naming the file, the line and where the key sits
// (gaffer.yaml:12: unknown key "max_turn" in profiles.fast.limits). An
// integer setting takes an integer in plain decimal digits that fits an
// int: 1.5 and 2.0 (floats), 010, 0x10 and 1_000 (read in another base or
// differently by other YAML parsers) and 99999999999999999999 are refused,
// not cut down or reread.
// Validation then rejects nonsense — an unknown driver or provider, a
// negative limit or price, an api_key_env that is not a variable name, a
// CLI template that cannot run, a cli role without a template, an llm role
// without a provider, a recovery count that is negative or below its least
// (trigger_threshold 2, max_tail_runes 1, max_failures_kept
// trigger_threshold) or a fraction outside [0, 1] — again with the line.
//
// # Notify targets' URLs
//
// A webhook or ntfy target has exactly one of url and url_env, the name of
// the environment variable holding its URL; a run's state keeps the name
// and the process delivering reads the variable. A literal url that is a
// secret is refused (SecretURL), naming url_env as the fix: a Slack or
// Discord webhook's, a topic on ntfy.sh, one with credentials before the
// host or a secret-looking query parameter. Other URLs, such as a local
// receiver's, are kept as they are: they go into the run's checkpoints.
//
// # Effective profiles
//
// Config.Effective gives a profile as it applies: the built-in default,
// with the file's "default" profile over it, with the named profile over
// that. Fields set replace (recovery's thresholds and budgets one by one,
// an explicit 0 included), maps (prices, agents, env) merge by key, and
// every role's driver, model and agent are filled in. WriteShow prints an
// effective profile as YAML for "gaffer config show", with every recovery
// threshold and budget a run would take (defaults included) when recovery
// is on, and with secrets masked:
// environment values in templates, secret-looking flags and URL passwords,
// any value under a secret-looking key, and the paths of notify targets'
// URLs (a Slack webhook's or an ntfy topic's path is its secret).
package config
