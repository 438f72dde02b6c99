import { readFile, writeFile } from "node:fs/promises"

// The project's own memory store: one JSON file of key/value notes
export async function load(file: string): Promise<Record<string, string>> {
  return JSON.parse(await readFile(file, "utf8").catch(() => "{}"))
}

export async function save(file: string, notes: Record<string, string>): Promise<void> {
  await writeFile(file, JSON.stringify(notes, null, 2))
}
