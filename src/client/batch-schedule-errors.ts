/** What the batch schedule calls (batch-schedules.ts) refuse, each naming what to fix. */
import { NotFoundError } from './not-found';

/** The option of `createBatchSchedule` a problem is about. */
export type BatchScheduleField = 'name' | 'items' | 'concurrency' | 'every' | 'cron' | 'overlap' | 'catchupWindow';

/** A schedule that cannot be created as asked: `field` names the option, `problem` says what is wrong with it. */
export class InvalidBatchScheduleError extends Error {
  override name = 'InvalidBatchScheduleError';
  constructor(
    readonly field: BatchScheduleField,
    readonly problem: string,
  ) {
    super(`${field} ${problem}`);
  }
}

/** No batch schedule of that name (or none the caller's owner may see). */
export class BatchScheduleNotFoundError extends NotFoundError {
  override name = 'BatchScheduleNotFoundError';
  constructor(readonly scheduleName: string) {
    super(`no batch schedule named ${scheduleName}`);
  }
}

/** A batch schedule of that name exists already: its name is its id. */
export class BatchScheduleExistsError extends Error {
  override name = 'BatchScheduleExistsError';
  constructor(readonly scheduleName: string) {
    super(`a batch schedule named ${scheduleName} exists already: delete it first to replace it, or give this one another name`);
  }
}
