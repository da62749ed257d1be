// Drive kosumi through Sabaki's own GTP library (@sabaki/gtp): the attach commands written all at
// once (pipelined), komi before boardsize, a whole game with kata-genmove_analyze for both sides,
// kata-analyze interrupted by the next command (protocol_version), final_score, quit.
// Usage: node play_game.js PYTHON GTP_SERVER_PY SIZE [ENGINE OPTION ...]; prints one JSON line
// with what happened.
const {Controller} = require('@sabaki/gtp')

async function main([python, server, size, ...options]) {
  const engine = new Controller(python, [server, '--seed', '5', ...options])
  engine.start()
  const errors = []
  const send = async (name, args = [], subscriber) => {
    const response = await engine.sendCommand({name, args}, subscriber)
    if (response.error) errors.push(`${name} ${args.join(' ')}: ${response.content}`)
    return response
  }
  const [name, , protocol, commands] = await Promise.all(
    ['name', 'version', 'protocol_version', 'list_commands'].map(command => send(command)))
  await send('komi', ['7'])
  await send('boardsize', [size])
  await send('clear_board')
  let colour = 'B', passes = 0, moves = 0, resigned = false
  while (passes < 2 && moves < 4 * size * size) {
    let played = null
    await send('kata-genmove_analyze', [colour, '50'], ({line}) => {
      const match = line.match(/^play (\S+)/)
      if (match) played = match[1].toLowerCase()
    })
    if (played === null) { errors.push('kata-genmove_analyze gave no play line'); break }
    if (played === 'resign') { resigned = true; break }
    passes = played === 'pass' ? passes + 1 : 0
    colour = colour === 'B' ? 'W' : 'B'
    moves++
  }
  let infoLines = 0
  const analysis = send('kata-analyze', [colour, '50'], ({line}) => {
    if (line.startsWith('info ')) infoLines++
  })
  await new Promise(resolve => setTimeout(resolve, 300))
  const interrupting = await send('protocol_version')
  const stream = await analysis
  const score = await send('final_score')
  await engine.stop()
  console.log(JSON.stringify({
    name: name.content, protocol: protocol.content, lists_kata: commands.content.split('\n')
      .includes('kata-analyze'), moves, passes, resigned, infoLines,
    streamEndedOk: !stream.error, interruptReply: interrupting.content, score: score.content,
    errors}))
}

main(process.argv.slice(2)).catch(error => { console.error(error); process.exit(1) })
