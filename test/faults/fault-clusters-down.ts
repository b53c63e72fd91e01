#!/usr/bin/env node
import { faultClusters } from './fault-clusters.js'

/** Stops the fault suite's clusters and removes their data (run after `npm run test:faults`). */
const { source, target } = faultClusters()
await Promise.all([source.stop(), target.stop()])
