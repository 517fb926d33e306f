// tsc compiles only TypeScript: the SQL scripts the migrations read beside their module
// (src/storage/postgres/*.sql) are copied to the same place under dist/, so the packaged service
// (`npm start`, dist/) finds them as the sources do under tsx.
import { copyFileSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

function copySql(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) copySql(path);
    else if (entry.endsWith(".sql")) {
      const target = join(root, "dist", relative(join(root, "src"), path));
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(path, target);
    }
  }
}

copySql(join(root, "src"));
