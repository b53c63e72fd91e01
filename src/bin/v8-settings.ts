import { setFlagsFromString } from 'node:v8'

/**
 * V8 flags the sidecar sets on itself; this module is the bin's first import, so they are set
 * before the rest of the program is loaded.
 *
 * `--no-allocation-site-pretenuring`: V8 watches each allocation site (an object or array
 * literal) and, once most objects from one survive young-generation collections, allocates
 * everything from that site directly in the old generation, where only a full collection frees
 * it. During a copy nearly everything survives for a while, so sites that run per fetch and per
 * check got that treatment (kafkajs' Fetch request data of every assigned partition, the loss
 * monitor's answers); once caught up their objects die within a second, but went on filling the
 * old generation: +3.5 MiB/s at 10,000 idle partitions, which V8 lets grow to 4x what its last
 * full collection kept before collecting again, hence the peak RSS. Without pretenuring those
 * objects die young: +1 MiB/s in the same run (V8 `--trace-gc`). What V8 gives up:
 * objects that do live long are copied once more by the young collector before they move to the
 * old generation. Correctness does not depend on it.
 */
export const SIDECAR_V8_FLAGS = ['--no-allocation-site-pretenuring'] as const

for (const flag of SIDECAR_V8_FLAGS) setFlagsFromString(flag)
