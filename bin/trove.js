#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's ESM loader (no build step needed).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
