#!/usr/bin/env node
// The installed command: runs the compiled client (npm run build, or prepack when packed).
import '../dist/main.js';
