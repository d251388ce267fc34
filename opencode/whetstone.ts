// whetstone for OpenCode: a thin plugin that hands every hook to the
// whetstone binary as a Claude-Code-shaped payload and applies its answer.
// Every decision is the binary's; this file only translates (docs/opencode.md).
//
// The payloads are those of Claude Code's hooks (hook_event_name,
// session_id, agent_id, agent_type, tool_name, tool_input, cwd, prompt,
// last_assistant_message) plus "client": "opencode" and the OpenCode ids:
// opencode_session_id, opencode_parent_session_id, opencode_agent. session_id
// is the root session's id (the one that owns a run, as in Claude Code,
// where subagents share their parent's session_id); agent_id is a child
// session's own id and agent_type its agent.
//
// OpenCode calls every export of a plugin file as a plugin: this file has
// exactly one export, and its helpers stay inside it.
import type { Plugin } from "@opencode-ai/plugin"
import { spawnSync } from "node:child_process"
import { accessSync, constants, existsSync, lstatSync, readFileSync, readdirSync, realpathSync, statSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

export const Whetstone: Plugin = async ({ client, directory }) => {
  // `whetstone install opencode` writes the binary's path here in the copy
  // it installs; the packaged file leaves it empty.
  const INSTALLED_BIN = ""
  const COMMAND = "whetstone-review" // /whetstone-review, the command file's name
  const SKILL = "whetstone-review" // the review skill's name (opencode/skill/whetstone-review/SKILL.md)
  const MAX_CONTINUATIONS = 4 // a child's report sent back at most this often (whetstone caps it at 2)
  const MAX_REPROMPTS = 8 // consecutive Stop re-prompts of a root session without a finished task

  type Info = { parentID?: string; agent?: string }
  // json is the answer's object ({} when stdout held none); answered says
  // whether stdout held a JSON object at all.
  type Answer = { exit: number; stdout: string; stderr: string; json: any; answered: boolean }

  // One copy per project directory: a second copy of this plugin (the npm
  // package and an installed file) would run every hook twice. The first
  // copy loaded for a directory is the one that runs, also when OpenCode
  // initialises the directory's instance again.
  const copies: Map<string, string> = ((globalThis as any)[Symbol.for("whetstone.opencode")] ??= new Map<string, string>())
  const first = copies.get(directory) ?? import.meta.url
  if (first !== import.meta.url) {
    console.error(`whetstone: ${import.meta.url} is a second copy of the plugin for ${directory}; only ${first} runs`)
    return {}
  }
  copies.set(directory, first)

  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url))) // the package root
  const sessions = new Map<string, Info>()
  const reprompts = new Map<string, number>()
  const compacted = new Set<string>()
  // Root sessions whose next message is whetstone's own (the command's
  // text, a Stop re-prompt): it already carries the instructions.
  const own = new Set<string>()
  // What whetstone answered a skill call with (the run's start and first
  // instructions), by call id, for the call's result.
  const skillContext = new Map<string, string>()
  // The original command of each bash call whetstone rewrote, by call id.
  const rewritten = new Map<string, string>()
  // Child sessions that were given their task (subagent-start's context).
  const briefed = new Set<string>()
  const bin = findBinary()
  // What a user does when whetstone cannot run, for the refusals below.
  const FIX =
    "Reinstall the whetstone package (its bin/ carries the binaries), run `whetstone install opencode` again, set WHETSTONE_BIN, or in a source checkout run `make build`."
  if (!bin) console.error(`whetstone: no whetstone binary found (WHETSTONE_BIN, the package's bin/, PATH); nothing is reviewed, and a session whose review run is in progress has every tool call refused. ${FIX}`)

  // findBinary: $WHETSTONE_BIN; the installed path; the package's prebuilt
  // bin/<goos>-<goarch>/whetstone; a source checkout's bin/whetstone
  // (`make build`) when its version is VERSION; whetstone on PATH outside
  // the project (onPath). The package root is the directory above this
  // file's.
  function findBinary(): string | undefined {
    const exe = process.platform === "win32" ? ".exe" : ""
    const goos = ({ linux: "linux", darwin: "darwin", win32: "windows" } as Record<string, string>)[process.platform]
    const goarch = ({ x64: "amd64", arm64: "arm64" } as Record<string, string>)[process.arch]
    const candidates = [
      process.env.WHETSTONE_BIN,
      INSTALLED_BIN,
      goos && goarch ? path.join(root, "bin", `${goos}-${goarch}`, "whetstone" + exe) : undefined,
    ]
    for (const c of candidates) if (c && existsSync(c)) return c
    // A source checkout's binary only when it is this checkout's version,
    // as the Claude Code launcher does (scripts/whetstone): a stale build
    // would enforce old rules.
    const built = path.join(root, "bin", "whetstone" + exe)
    if (existsSync(built)) {
      const want = existsSync(path.join(root, "VERSION")) ? readFileSync(path.join(root, "VERSION"), "utf8").trim() : ""
      const got = spawnSync(built, ["version"], { encoding: "utf8", timeout: 5000 }).stdout?.trim().replace(/^whetstone /, "") ?? ""
      if (!want || got === want) return built
      console.error(`whetstone: ${built} is version ${got || "unknown"}, not ${want}; not using it (run 'make build')`)
    }
    return onPath("whetstone" + exe)
  }

  // onPath finds name on PATH, never in the project under review: an
  // empty or relative entry, or one at or under the project root (as
  // written or resolved; one that cannot be resolved too), is passed over,
  // as toolpath.Clean does for the binary's own programs. An activated
  // .venv/bin or a direnv'd node_modules/.bin would otherwise let the
  // repository answer for whetstone.
  function onPath(name: string): string | undefined {
    const proj = projectRoot()
    const roots = [proj, real(proj) ?? proj]
    const inside = (d: string) => roots.some((r) => d === r || d.startsWith(r.endsWith(path.sep) ? r : r + path.sep))
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
      const resolved = path.isAbsolute(dir) ? real(dir) : undefined
      if (!resolved || inside(path.resolve(dir)) || inside(resolved)) continue
      const c = path.join(dir, name)
      try {
        accessSync(c, constants.X_OK)
        if (statSync(c).isFile()) return c
      } catch {}
    }
    return undefined
  }

  function real(p: string): string | undefined {
    try {
      return realpathSync(p)
    } catch {
      return undefined
    }
  }

  // projectRoot is the project root as the binary finds it (app.FindRoot):
  // the nearest ancestor of the directory holding .git, else the directory.
  function projectRoot(): string {
    for (let d = directory; ; d = path.dirname(d)) {
      if (exists(path.join(d, ".git"))) return d
      if (path.dirname(d) === d) return directory
    }
  }

  function decode(exit: number, stdout: string, stderr: string): Answer {
    let json: any = {}
    let answered = false
    const out = stdout.trim()
    if (out.startsWith("{")) {
      try {
        json = JSON.parse(out)
        answered = typeof json === "object" && json !== null && !Array.isArray(json)
        if (!answered) json = {}
      } catch {
        json = {}
      }
    }
    return { exit, stdout: out, stderr: stderr.trim(), json, answered }
  }

  // run hands one event to the binary: its stdin is the payload, its answer
  // one JSON object on stdout (or exit 2 and a reason on stderr).
  async function run(event: string, payload: object): Promise<Answer | undefined> {
    if (!bin) return undefined
    let p
    try {
      p = Bun.spawn([bin, "hook", event], {
        timeout: timeoutOf(event),
        stdin: new Blob([JSON.stringify(payload)]),
        stdout: "pipe",
        stderr: "pipe",
        cwd: directory,
        env: { ...process.env },
      })
    } catch (e) {
      console.error(`whetstone: cannot run ${bin}: ${e}`)
      return decode(-1, "", String(e))
    }
    const [stdout, stderr, exit] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
    if (exit !== 0 && exit !== 2) console.error(`whetstone: hook ${event} exited ${exit}: ${stderr.trim()}`)
    return decode(exit, stdout, stderr)
  }

  // runSync is run for the idle handler: OpenCode does not await events,
  // and `opencode run` exits right after the root session's first idle.
  function runSync(event: string, payload: object): Answer | undefined {
    if (!bin) return undefined
    const r = spawnSync(bin, ["hook", event], { input: JSON.stringify(payload), encoding: "utf8", cwd: directory, env: process.env, timeout: timeoutOf(event) })
    return decode(r.status ?? 1, r.stdout ?? "", r.stderr ?? "")
  }

  // TIMEOUT_S is how long each hook may take, in seconds, as in
  // hooks/hooks.json (TestHookTimeoutsAgree keeps them, Codex's and the
  // binary's deadline equal). A gate killed at its timeout refuses the call
  // (blocked); the binary refuses it itself a little before.
  const TIMEOUT_S: Record<string, number> = { "session-start": 120, "user-prompt-submit": 120, "pre-tool-use": 120, "subagent-start": 60, "subagent-stop": 120, "stop": 120 }

  function timeoutOf(event: string): number {
    return (TIMEOUT_S[event] ?? 120) * 1000
  }

  // running reports whether root session has a review run in progress in
  // the project: whetstone keeps .whetstone/active/<session> while it does
  // (app.markActive), under the project root as the binary finds it (the
  // nearest ancestor holding .git, else the directory). A session id that
  // cannot name a file counts any run of the project; what cannot be read
  // counts as a run. For when the binary cannot be run at all.
  function running(session: string): boolean {
    const proj = projectRoot()
    const active = path.join(proj, ".whetstone", "active")
    if (!exists(path.join(proj, ".whetstone")) || !exists(active)) return false
    if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(session)) return exists(path.join(active, session))
    try {
      return readdirSync(active).length > 0
    } catch {
      return true
    }
  }

  function exists(p: string): boolean {
    try {
      lstatSync(p)
      return true
    } catch (e: any) {
      return e?.code !== "ENOENT" && e?.code !== "ENOTDIR"
    }
  }

  // blocked is the reason of a block or a deny, or undefined. A gate
  // (pre-tool-use) fails closed: the binary answers every call it is given
  // with a JSON object ({} for no objection), so a crash, a timeout, an
  // empty or unparseable answer denies; any other hook that failed lets
  // the action go on, as in Claude Code. With no binary at all (or one
  // that cannot be started), the tool hook asks running() instead.
  function blocked(a: Answer | undefined, gate = false): string | undefined {
    if (!a) return undefined
    if (a.exit === 2) return a.stderr || "blocked by whetstone"
    const s = a.json.hookSpecificOutput
    if (a.json.decision === "block" || s?.permissionDecision === "deny") return a.json.reason || s?.permissionDecisionReason || "blocked by whetstone"
    if (!gate) return undefined
    if (a.exit !== 0) return `whetstone could not check this call (exit ${a.exit}): ${a.stderr || "no message"}`
    if (!a.answered) return `whetstone gave no answer for this call (${a.stdout ? "not a JSON object" : "empty output"}; is ${bin} older than this plugin?): ${a.stderr || "no message"}`
    return undefined
  }

  // context is the text an answer adds for the model (additionalContext,
  // or a message for the user).
  function context(a: Answer | undefined): string {
    return a?.json.hookSpecificOutput?.additionalContext || a?.json.systemMessage || ""
  }

  function remember(info: any) {
    if (info?.id) sessions.set(info.id, { parentID: info.parentID || undefined, agent: info.agent || undefined })
  }

  async function lookup(id: string): Promise<Info> {
    let info = sessions.get(id)
    if (!info) {
      const r: any = await client.session.get({ path: { id } }).catch(() => undefined)
      remember(r?.data ?? { id })
      info = sessions.get(id) ?? {}
    }
    return info
  }

  // payload is the Claude-Code-shaped part every event shares.
  async function payload(event: string, sessionID: string, extra: object = {}): Promise<object> {
    const info = await lookup(sessionID)
    let root = sessionID
    for (let i = 0, p = info.parentID; p && i < 16; i++) {
      root = p
      p = (await lookup(p)).parentID
    }
    const child = info.parentID ? { agent_id: sessionID, agent_type: info.agent ?? "" } : {}
    return {
      hook_event_name: event,
      session_id: root,
      cwd: directory,
      client: "opencode",
      opencode_session_id: sessionID,
      opencode_parent_session_id: info.parentID ?? null,
      opencode_agent: info.agent ?? null,
      ...child,
      ...extra,
    }
  }

  function taskResult(output: string): string {
    const m = /<task_result>\n?([\s\S]*?)\n?<\/task_result>/.exec(output)
    return m ? m[1] : output
  }

  function texts(parts: any[] | undefined): string {
    return (parts ?? []).filter((p) => p?.type === "text" && !p.synthetic).map((p) => p.text).join("\n")
  }

  // readDefinition splits one of the package's generated agent or command
  // files into its frontmatter (flat keys, and one level under
  // "permission:") and its body.
  function readDefinition(file: string): { front: Record<string, any>; body: string } | undefined {
    let text: string
    try {
      text = readFileSync(file, "utf8")
    } catch {
      return undefined
    }
    const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text)
    if (!m) return undefined
    const front: Record<string, any> = {}
    let nested: Record<string, string> | undefined
    for (const line of m[1].split("\n")) {
      const kv = /^(\s*)([\w-]+):\s*(.*)$/.exec(line)
      if (!kv) continue
      if (kv[1] && nested) nested[kv[2]] = kv[3]
      else if (kv[3] === "") front[kv[2]] = nested = {}
      else {
        front[kv[2]] = kv[3]
        nested = undefined
      }
    }
    return { front, body: m[2] }
  }

  return {
    // Loaded from the npm package, the plugin brings its agents, the
    // review command and the review skill (opencode/agent, opencode/command,
    // opencode/skill) itself; files of the same names in a config dir
    // (whetstone install opencode) win.
    config: async (config: any) => {
      if (INSTALLED_BIN) return keepUserDenies(config)
      const dir = path.join(root, "opencode")
      if (existsSync(path.join(dir, "skill", SKILL, "SKILL.md"))) {
        config.skills ??= {}
        config.skills.paths = [...(config.skills.paths ?? []), path.join(dir, "skill")]
      }
      let agents: string[] = []
      try {
        agents = readdirSync(path.join(dir, "agent")).filter((f) => f.endsWith(".md"))
      } catch {
        return
      }
      config.agent ??= {}
      for (const f of agents) {
        const name = f.slice(0, -3)
        const d = readDefinition(path.join(dir, "agent", f))
        if (!d || config.agent[name]) continue
        config.agent[name] = { description: d.front.description, mode: d.front.mode, permission: d.front.permission, prompt: d.body }
      }
      const c = readDefinition(path.join(dir, "command", COMMAND + ".md"))
      config.command ??= {}
      if (c && !config.command[COMMAND]) config.command[COMMAND] = { description: c.front.description, template: c.body }
      keepUserDenies(config)
    },

    event: async ({ event }) => {
      const e: any = event
      switch (e.type) {
        case "session.created":
        case "session.updated":
          remember(e.properties?.info)
          return
        case "session.compacted":
          if (e.properties?.sessionID) compacted.add(e.properties.sessionID)
          return
        case "session.idle": {
          const id = e.properties?.sessionID
          if (!id || sessions.get(id)?.parentID) return
          const n = reprompts.get(id) ?? 0
          const reason = blocked(runSync("stop", await payload("Stop", id, { stop_hook_active: n > 0 })))
          if (!reason) {
            reprompts.delete(id)
            return
          }
          if (n >= MAX_REPROMPTS) {
            console.error(`whetstone: not re-prompting session ${id} a ${n + 1}th time in a row`)
            return
          }
          reprompts.set(id, n + 1)
          own.add(id)
          await client.session.promptAsync({ path: { id }, body: { parts: [{ type: "text", text: reason }] } })
          return
        }
      }
    },

    "command.execute.before": async (input, output) => {
      if (input.command !== COMMAND) return
      const prompt = `/whetstone:review ${input.arguments ?? ""}`.trim()
      const a = await run("user-prompt-submit", await payload("UserPromptSubmit", input.sessionID, { prompt }))
      const reason = blocked(a)
      const parts: any[] = output.parts
      if (reason) {
        parts.length = 0
        parts.push({ type: "text", text: `whetstone did not start a review: ${reason}\nTell the user exactly this, and do nothing else.` })
        return
      }
      const text = context(a)
      if (text) parts.push({ type: "text", text })
      own.add(input.sessionID)
    },

    "chat.message": async (input, output) => {
      const info = await lookup(input.sessionID)
      const agent = input.agent ?? output.message?.agent
      if (info.parentID) {
        if (agent && !info.agent) info.agent = agent
        // The agent's whole task (its files, fix checks, the rule, the
        // output contract) comes from whetstone, not from the dispatch's
        // short prompt: a text part of the child's first message, as
        // Claude Code's SubagentStart context. It stays in the child's
        // history, so a continued child still has it.
        const text = context(await run("subagent-start", await payload("SubagentStart", input.sessionID)))
        const first: any = output.parts[0]
        if (text && first?.messageID && !briefed.has(input.sessionID)) {
          briefed.add(input.sessionID)
          output.parts.push(textPart(first, text))
        }
        return
      }
      if (own.delete(input.sessionID)) return
      // A root prompt during a run: whetstone reminds the orchestrator of
      // agents nobody dispatched yet, as after a Claude Code prompt. A part
      // added here needs the message's ids: OpenCode rejects a bare one and
      // the run fails.
      const a = await run("user-prompt-submit", await payload("UserPromptSubmit", input.sessionID, { prompt: texts(output.parts) }))
      const text = context(a)
      const first: any = output.parts[0]
      if (text && first?.messageID) {
        output.parts.push(textPart(first, text))
      }
    },

    "experimental.chat.system.transform": async (input, output) => {
      // After a compaction, the current phase's instructions go back into
      // the root session's system prompt (SessionStart with source compact).
      const id = input.sessionID
      if (!id || !compacted.has(id) || sessions.get(id)?.parentID) return
      const text = context(await run("session-start", await payload("SessionStart", id, { source: "compact" })))
      if (text) output.system.push(text)
      else compacted.delete(id)
    },

    "tool.execute.before": async (input, output) => {
      const call: any = await payload("PreToolUse", input.sessionID, { tool_name: input.tool, tool_input: output.args ?? {} })
      const a = await run("pre-tool-use", call)
      // No whetstone to ask: a session with no run in progress must not
      // notice, one with a run has every call refused (fail closed).
      if (!a || a.exit === -1) {
        if (running(String(call.session_id))) {
          const why = a ? `${bin} cannot be run (${a.stderr})` : "no whetstone binary was found (WHETSTONE_BIN, the package's bin/, PATH)"
          throw new Error(`whetstone: ${why}, and this session's review run is in progress, so this call is refused: nothing runs unchecked until whetstone can run again. Tell the user exactly this. ${FIX}`)
        }
        return
      }
      const reason = blocked(a, true)
      if (reason) throw new Error(reason)
      // The binary's rewrite of a bash call (the command run in the
      // sandbox): the new command replaces the old one in place (OpenCode
      // runs the mutated args; reassigning output.args has no effect), the
      // call's other fields stay. OpenCode's own permission check, which
      // comes after this hook, judges the rewritten line (docs/opencode.md).
      const updated = a?.json.hookSpecificOutput?.updatedInput
      if (updated !== undefined) {
        if (input.tool !== "bash" || typeof updated?.command !== "string" || !output.args) throw new Error(`whetstone answered this ${input.tool} call with a rewrite the plugin cannot apply`)
        rewritten.set(input.callID, output.args.command)
        output.args.command = updated.command
      }
      // Loading the review skill starts (or resumes) the session's run:
      // whetstone's start message and first instructions follow the skill's
      // content in the call's result.
      const text = input.tool === "skill" && (output.args as any)?.name === SKILL ? context(a) : ""
      if (text) skillContext.set(input.callID, text)
    },

    "tool.execute.after": async (input, output) => {
      // A rewritten call is titled with the command the model wrote: the
      // stored input (what the TUI prints under the title, and what the
      // model sees of its own call from now on) keeps the bwrap line, and
      // changing it here has no effect.
      const original = rewritten.get(input.callID)
      if (original !== undefined) {
        rewritten.delete(input.callID)
        output.title = `${original} (whetstone sandbox)`
      }
      if (input.tool === "skill") {
        const text = skillContext.get(input.callID)
        skillContext.delete(input.callID)
        if (text) output.output += `\n\n${text}`
        return
      }
      if (input.tool !== "task") return
      reprompts.delete(input.sessionID)
      const child: string | undefined = output.metadata?.sessionId
      const agent: string | undefined = (input.args as any)?.subagent_type
      if (!child || !agent) return
      if (!sessions.get(child)?.parentID) sessions.set(child, { parentID: input.sessionID, agent })
      let answer = taskResult(output.output)
      let a: Answer | undefined
      for (let i = 0; ; i++) {
        a = await run("subagent-stop", await payload("SubagentStop", child, { last_assistant_message: answer }))
        const reason = blocked(a)
        if (!reason || i >= MAX_CONTINUATIONS) break
        // whetstone sent the report back: the child answers again, as its
        // own agent, and the parent sees the corrected answer.
        const r: any = await client.session.prompt({ path: { id: child }, body: { agent, parts: [{ type: "text", text: reason }] } })
        answer = texts(r?.data?.parts)
      }
      if (answer !== taskResult(output.output)) {
        output.output = output.output.replace(/<task_result>[\s\S]*<\/task_result>/, () => `<task_result>\n${answer}\n</task_result>`)
      }
      const text = context(a)
      if (text) output.output += `\n\n${text}`
    },
  }

  // keepUserDenies keeps the user's own bash deny rules in force for
  // whetstone's agents. Their `bash: allow` (so that `opencode run`, which
  // rejects asks, can run their commands) comes after the user's rules, and
  // OpenCode's last matching rule wins: without this a global
  // `"rm *": "deny"` would not stop whetstone-fixer's `rm`. The user's deny
  // rules are appended after the agent's allow; a bash denied outright
  // stays denied. The user's ask rules are not: an ask is a refusal under
  // `opencode run` (docs/opencode.md).
  function keepUserDenies(config: any) {
    const bash = config.permission === "deny" ? "deny" : config.permission?.bash
    const denies: Record<string, string> = {}
    if (bash === "deny") denies["*"] = "deny"
    else if (bash && typeof bash === "object") for (const [p, a] of Object.entries(bash)) if (a === "deny") denies[p] = "deny"
    if (Object.keys(denies).length === 0) return
    for (const [name, agent] of Object.entries<any>(config.agent ?? {})) {
      const own = agent?.permission?.bash
      if (!name.startsWith("whetstone-") || own === undefined || own === "deny") continue
      agent.permission.bash = denies["*"] ? "deny" : { ...(typeof own === "string" ? { "*": own } : own), ...denies }
    }
  }

  // textPart is whetstone's text added to the message that holds part
  // first: OpenCode rejects a part without a fresh id and the message's
  // ids, and the run fails.
  function textPart(first: any, text: string): any {
    return { id: partID(), sessionID: first.sessionID, messageID: first.messageID, type: "text", text, synthetic: true }
  }

  // partID makes an id that sorts after the message's other parts, in
  // OpenCode's format: "prt_", 12 hex digits of time, 14 random characters.
  function partID(): string {
    const time = (BigInt(Date.now()) * 4096n + BigInt(Math.floor(Math.random() * 4096))).toString(16).padStart(12, "0").slice(-12)
    const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    let rand = ""
    for (let i = 0; i < 14; i++) rand += chars[Math.floor(Math.random() * chars.length)]
    return `prt_${time}${rand}`
  }
}
