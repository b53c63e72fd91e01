import { readFileSync } from 'node:fs'
import { inflateRawSync } from 'node:zlib'

const END_OF_CENTRAL_DIRECTORY = 0x06054b50
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50
const LOCAL_FILE_HEADER = 0x04034b50

/**
 * The files of a jar (a zip archive) whose names `wanted` accepts, by name: the central directory is
 * read from the end of the archive, each entry stored or deflated. Enough for Kafka's jars, which hold
 * no zip64 records and no archive comment longer than 64 KiB.
 */
export function readJarEntries (jarPath: string, wanted: (name: string) => boolean): Map<string, Buffer> {
  const jar = readFileSync(jarPath)
  let end = jar.length - 22
  while (end >= Math.max(0, jar.length - 22 - 0xffff) && jar.readUInt32LE(end) !== END_OF_CENTRAL_DIRECTORY) end--
  if (end < 0 || jar.readUInt32LE(end) !== END_OF_CENTRAL_DIRECTORY) throw new Error(`${jarPath}: no zip end of central directory`)
  const count = jar.readUInt16LE(end + 10)
  let at = jar.readUInt32LE(end + 16)
  const entries = new Map<string, Buffer>()
  for (let i = 0; i < count; i++) {
    if (jar.readUInt32LE(at) !== CENTRAL_DIRECTORY_ENTRY) throw new Error(`${jarPath}: central directory entry ${i} is damaged`)
    const method = jar.readUInt16LE(at + 10)
    const compressedSize = jar.readUInt32LE(at + 20)
    const nameLength = jar.readUInt16LE(at + 28)
    const extraLength = jar.readUInt16LE(at + 30)
    const commentLength = jar.readUInt16LE(at + 32)
    const localHeader = jar.readUInt32LE(at + 42)
    const name = jar.toString('utf8', at + 46, at + 46 + nameLength)
    at += 46 + nameLength + extraLength + commentLength
    if (!wanted(name)) continue
    if (jar.readUInt32LE(localHeader) !== LOCAL_FILE_HEADER) throw new Error(`${jarPath}: ${name} has no local file header`)
    const dataStart = localHeader + 30 + jar.readUInt16LE(localHeader + 26) + jar.readUInt16LE(localHeader + 28)
    const data = jar.subarray(dataStart, dataStart + compressedSize)
    if (method === 0) entries.set(name, Buffer.from(data))
    else if (method === 8) entries.set(name, inflateRawSync(data))
    else throw new Error(`${jarPath}: ${name} is compressed with zip method ${method}, which this reader does not know`)
  }
  return entries
}
