// bench-opencode measures what the OpenCode plugin adds to each gated tool
// call: the time its tool.execute.before hook takes, payload, spawn of the
// whetstone binary and its answer included, median over 100 calls. Run by
// scripts/bench-opencode with OpenCode's own Bun (BUN_BE_BUN=1):
//
//	BUN_BE_BUN=1 opencode run scripts/bench-opencode.ts <project dir>
import { Whetstone } from "../opencode/whetstone.ts"

const dir = process.argv[2]
const N = 100
const client: any = { session: { get: async ({ path }: any) => ({ data: { id: path.id } }) } }
const hooks: any = await Whetstone({ client, directory: dir } as any)

async function measure(what: string, sessionID: string, tool: string, args: object) {
  const times: number[] = []
  let denied = 0
  for (let i = -10; i < N; i++) { // 10 warm-up calls, not counted
    const t0 = performance.now()
    try {
      await hooks["tool.execute.before"]({ tool, sessionID, callID: `call_${i}` }, { args: { ...args } })
    } catch {
      if (i >= 0) denied++
    }
    if (i >= 0) times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  const q = (p: number) => times[Math.min(N - 1, Math.floor(p * N))].toFixed(2)
  console.log(`${what}: median ${q(0.5)} ms, p90 ${q(0.9)} ms, max ${times[N - 1].toFixed(2)} ms over ${N} calls (${denied} denied)`)
}

await measure("no run, read", "ses_other", "read", { filePath: `${dir}/a.go` })
const parts: any[] = []
await hooks["command.execute.before"]({ command: "whetstone-review", sessionID: "ses_bench", arguments: "" }, { parts })
if (!parts.some((p) => String(p.text).includes("WHETSTONE-DISPATCH"))) throw new Error("no run started: " + JSON.stringify(parts))
await measure("run, orchestrator read (allowed)", "ses_bench", "read", { filePath: `${dir}/a.go` })
await measure("run, orchestrator edit (denied)", "ses_bench", "edit", { filePath: `${dir}/a.go`, oldString: "1", newString: "2" })
await measure("run, orchestrator bash (parsed, allowed)", "ses_bench", "bash", { command: "git diff --stat", description: "d" })
