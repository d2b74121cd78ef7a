// Reading a password: without echo on a terminal, else the first line of standard input.
import type { Readable, Writable } from 'node:stream';

export type PasswordInput = Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

/** The first line of a piped input (without its line ending); all of it when it has no newline. */
function readFirstLine(input: Readable): Promise<string> {
  return new Promise((done, fail) => {
    let text = '';
    const finish = (): void => {
      input.off('data', onData);
      input.pause();
      done(text.split('\n')[0]!.replace(/\r$/, ''));
    };
    const onData = (chunk: string): void => {
      text += chunk;
      if (text.includes('\n')) finish();
    };
    input.setEncoding('utf8');
    input.on('data', onData);
    input.once('end', finish);
    input.once('error', fail);
  });
}

/** Prompts (on standard error) and reads keys in raw mode, so nothing typed is echoed. */
function promptHidden(input: PasswordInput, output: Writable, prompt: string): Promise<string> {
  output.write(prompt);
  input.setRawMode?.(true);
  input.setEncoding('utf8');
  input.resume();
  return new Promise((done, fail) => {
    let typed = '';
    const finish = (): void => {
      input.setRawMode?.(false);
      input.off('data', onData);
      input.pause();
      output.write('\n');
    };
    const onData = (keys: string): void => {
      for (const key of keys) {
        if (key === '\u0003') {
          finish(); // Ctrl-C
          return fail(new Error('cancelled'));
        } else if (key === '\r' || key === '\n' || key === '\u0004') {
          finish();
          return done(typed);
        } else if (key === '\u007f' || key === '\b') typed = typed.slice(0, -1);
        else typed += key;
      }
    };
    input.on('data', onData);
  });
}

/** The new password: typed twice on a terminal (they must match), else the first input line. */
export async function readNewPassword(input: PasswordInput, output: Writable): Promise<string> {
  if (!input.isTTY) return readFirstLine(input);
  const first = await promptHidden(input, output, 'Password: ');
  const again = await promptHidden(input, output, 'Repeat password: ');
  if (first !== again) throw new Error('The passwords do not match');
  return first;
}
