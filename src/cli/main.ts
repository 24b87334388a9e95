/** The `trove` command line: `trove start`, `trove import`, `trove cluster up`. */
import { Command } from 'commander';
import { TROVE_VERSION } from '../node/version.ts';
import { registerClusterCommand } from './cluster-up.ts';
import { registerImportCommand } from './import.ts';
import { registerStartCommand } from './start.ts';

const program = new Command('trove').description('Trove document search service').version(TROVE_VERSION);
registerStartCommand(program);
registerImportCommand(program);
registerClusterCommand(program);
await program.parseAsync(process.argv);
