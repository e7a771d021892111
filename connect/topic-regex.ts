/**
 * The regular expressions a connector config brings (`topics.regex`, RegexRouter's `regex`,
 * TopicNameMatches' `pattern`) are untrusted input that the validate route compiles and the runtime
 * runs against every topic name. JavaScript's RegExp backtracks: `(a+)+` against a long name froze
 * every route of the stack for over 20 s. They run in RE2JS instead (the JavaScript port of RE2, no
 * dependencies and no install scripts): matching takes time linear in the input, whatever the pattern.
 * Linear still has a constant: the size of the compiled program, which counted repetitions such as
 * `[a-z]{1,1000}` inflate. So a pattern is also bounded before it is compiled (its length and the sum
 * of its counted repetitions) and after (its program size), and the inputs are topic names (at most
 * 249 characters). RE2's syntax is Java's without backreferences and lookaround, which topic patterns
 * do not need; a pattern using them is refused with RE2's message.
 */
import { RE2JS } from 're2js';

export const TOPIC_REGEX_LIMITS = {
  /** Characters in one pattern. */
  maxChars: 1000,
  /** Sum of the counts in `{n}`, `{n,}` and `{n,m}` (RE2 itself refuses one above 1000). */
  maxRepeatSum: 1000,
  /** Instructions of the compiled program (`(a+)+` is 7, `[a-z]{1,100}` 201). */
  maxProgramSize: 2000,
} as const;

export interface TopicRegex {
  /** Java's `Matcher.matches()`: the whole name must match. */
  matches(name: string): boolean;
  /** Java's `Matcher.replaceFirst` on a whole match (`$1` for the first group), as RegexRouter does. */
  replaceFirst(name: string, replacement: string): string;
}

const repeatSum = (source: string): number =>
  [...source.matchAll(/\{(\d+)(?:,(\d*))?\}/g)].reduce(
    (sum, m) => sum + Math.max(Number(m[1]), m[2] ? Number(m[2]) : 0),
    0,
  );

/** Compiles an untrusted pattern, or throws an Error whose message says why not. */
export const compileTopicRegex = (source: string): TopicRegex => {
  const limits = TOPIC_REGEX_LIMITS;
  if (source.length > limits.maxChars)
    throw new Error(`the pattern is ${source.length} characters; the limit is ${limits.maxChars}`);
  if (repeatSum(source) > limits.maxRepeatSum)
    throw new Error(`the pattern's repetition counts add up to more than ${limits.maxRepeatSum}`);
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(source);
  } catch (error) {
    throw new Error((error as Error).message);
  }
  if (pattern.programSize() > limits.maxProgramSize)
    throw new Error(
      `the pattern compiles to ${pattern.programSize()} instructions; the limit is ${limits.maxProgramSize}`,
    );
  return {
    matches: (name) => pattern.matches(name),
    replaceFirst: (name, replacement) => pattern.matcher(name).replaceFirst(replacement),
  };
};

/** The error message of a pattern that does not compile, or undefined (a ConfigDef validator). */
export const topicRegexError = (source: string): string | undefined => {
  try {
    compileTopicRegex(source);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};
