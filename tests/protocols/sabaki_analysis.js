// Drives a GTP engine through Sabaki's own GTP module (@sabaki/gtp) as Sabaki analyses:
// play a move, start an analysis, let a few lines come, send the next command, and read
// each info line with the field rules of Sabaki's parseAnalysis (src/modules/analysis.js).
// Usage: node sabaki_analysis.js PYTHON ENGINE_CODE  (NODE_PATH names @sabaki/gtp's folder)
// Prints one JSON object on stdout.
const {Controller} = require('@sabaki/gtp')

// Sabaki's rules: entries split on "info"; the PV is the run of vertices that ends the
// entry, after a "pv" key; the rest are key-value pairs; a winrate with a point is a
// fraction (x 100 for percent), one without is Leela Zero's x 10000 integer.
function parseAnalysis(line) {
  return line
    .split(/\s*info\s+/)
    .slice(1)
    .map((entry) => entry.trim())
    .map((entry) => {
      const pv = entry.match(/(pass|[A-Za-z]\d+)(\s+(pass|[A-Za-z]\d+))*$/)
      if (pv == null) return null
      const tokens = entry.slice(0, pv.index).trim().split(/\s+/)
      const key = tokens.pop()
      const fields = {}
      for (let i = 0; i + 1 < tokens.length; i += 2) fields[tokens[i]] = tokens[i + 1]
      return {
        pvKey: key,
        move: fields.move,
        visits: +fields.visits,
        winrate: fields.winrate.includes('.') ? +fields.winrate * 100 : +fields.winrate / 100,
        scoreLead: fields.scoreLead != null ? +fields.scoreLead : null,
        pv: pv[0].split(/\s+/),
      }
    })
    .filter((entry) => entry != null)
}

async function analyse(engine, name, args, wanted) {
  const lines = []
  const response = engine.sendCommand({name, args}, ({line}) => {
    if (line.startsWith('info ')) lines.push(line)
  })
  const started = Date.now()
  while (lines.length < wanted && Date.now() - started < 60000) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const stop = await engine.sendCommand({name: 'stop'})
  await response
  return {
    lines: lines.length,
    entries: lines.map((line) => (line.match(/\binfo /g) || []).length),
    parsed: lines.map(parseAnalysis),
    stopError: stop.error,
  }
}

async function main() {
  const engine = new Controller(process.argv[2], ['-c', process.argv[3]])
  engine.start()
  const name = await engine.sendCommand({name: 'name'})
  await engine.sendCommand({name: 'play', args: ['B', 'E5']})
  const kata = await analyse(engine, 'kata-analyze', ['W', '10'], 3)
  const lz = await analyse(engine, 'lz-analyze', ['W', '10'], 3)
  await engine.stop()
  console.log(JSON.stringify({name: name.content, kata, lz}))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
