// Reading a password: without echo on a terminal, else the first line of standard input.
import { stdin, stderr } from 'node:process';

/** The first line of a piped standard input (without its line ending). */
function readFirstLine(): Promise<string> {
  return new Promise((done, fail) => {
    let text = '';
    const finish = (): void => {
      stdin.off('data', onData);
      stdin.pause();
      done(text.split('\n')[0]!.replace(/\r$/, ''));
    };
    const onData = (chunk: string): void => {
      text += chunk;
      if (text.includes('\n')) finish();
    };
    stdin.setEncoding('utf8');
    stdin.on('data', onData);
    stdin.once('end', finish);
    stdin.once('error', fail);
  });
}

/** Prompts on standard error and reads keys in raw mode, so nothing typed is echoed. */
function promptHidden(prompt: string): Promise<string> {
  stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((done) => {
    let typed = '';
    const onData = (keys: string): void => {
      for (const key of keys) {
        if (key === '\u0003') {
          stdin.setRawMode(false);
          stderr.write('\n');
          process.exit(130); // Ctrl-C
        } else if (key === '\r' || key === '\n' || key === '\u0004') {
          stdin.setRawMode(false);
          stdin.off('data', onData);
          stdin.pause();
          stderr.write('\n');
          return done(typed);
        } else if (key === '\u007f' || key === '\b') typed = typed.slice(0, -1);
        else typed += key;
      }
    };
    stdin.on('data', onData);
  });
}

/** The new password: typed twice on a terminal (they must match), else the first input line. */
export async function readNewPassword(): Promise<string> {
  if (!stdin.isTTY) return readFirstLine();
  const first = await promptHidden('Password: ');
  const again = await promptHidden('Repeat password: ');
  if (first !== again) throw new Error('The passwords do not match');
  return first;
}
