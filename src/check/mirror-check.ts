#!/usr/bin/env node
import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { certificateCommand } from './commands/certificate.js'
import { cutoverCommand } from './commands/cutover.js'
import { drillCommand } from './commands/drill.js'
import { failbackCommand, failoverCommand } from './commands/failover.js'
import { fenceCommand } from './commands/fence.js'
import { groupsCommand } from './commands/failover-groups.js'
import { lagCommand } from './commands/lag.js'
import { offsetsCommand } from './commands/offsets.js'
import { rpoCommand } from './commands/rpo.js'
import { translateCommand } from './commands/translate.js'
import { verifyCommand } from './commands/verify.js'
import { unknownCommandLine } from './cli/command-suggestion.js'
import { ExitCode } from './cli/exit-codes.js'
import { usageLine } from './cli/run-command.js'
import { packageVersion } from '../shared/package-version.js'

const COMMANDS = ['offsets', 'lag', 'verify', 'translate', 'cutover', 'failover', 'failback', 'groups', 'drill', 'rpo', 'fence', 'certificate', 'completion']

function fail (text: string): never {
  process.stderr.write(`mirror-check: ${text}\nRun mirror-check --help for usage.\n`)
  process.exit(ExitCode.ERROR)
}

const args = hideBin(process.argv)
const unknownCommand = unknownCommandLine(args, COMMANDS)
if (unknownCommand !== undefined) fail(unknownCommand)

await yargs(args)
  .scriptName('mirror-check')
  .usage('$0 [command] [options]\n\nAudit a Kafka mirror: consumer group offsets and lag, cross-cluster lag, record-by-record verification of the copy, exact translation of group offsets to the target, and a cutover gate.\nExit codes: 0 ok, 1 check failed, 2 usage or runtime error.')
  .command(offsetsCommand)
  .command(lagCommand)
  .command(verifyCommand)
  .command(translateCommand)
  .command(cutoverCommand)
  .command(failoverCommand)
  .command(failbackCommand)
  .command(groupsCommand)
  .command(drillCommand)
  .command(rpoCommand)
  .command(fenceCommand)
  .command(certificateCommand)
  .completion('completion', 'Print a bash completion script (mirror-check completion >> ~/.bashrc)')
  .strict()
  .help()
  .alias('help', 'h')
  .version('version', 'Print the version and exit', packageVersion())
  // Messages in English whatever LANG says: usageLine() reads yargs' "Invalid values:" text.
  .locale('en')
  .wrap(Math.min(120, process.stdout.columns ?? 100))
  .fail((message, error) => {
    fail(usageLine(message ?? error?.message ?? 'invalid arguments'))
  })
  .parseAsync()

// Output is flushed by now (stdout writes are awaited; stderr is synchronous on pipes and files): do not wait for idle client sockets.
process.exit(process.exitCode ?? ExitCode.OK)
